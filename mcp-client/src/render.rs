//! An MCP result as the JSON string the model sees, as the reference
//! renders it:
//!
//! - `isError`: `{"error": TEXT}`, TEXT the text blocks (and embedded text
//!   resources) joined, or `MCP tool returned an error`; credentials stripped.
//! - otherwise the blocks joined by `\n`: text as is; an image or audio block
//!   saved under the profile's `cache/images` / `cache/audio` and written
//!   `MEDIA:<path>`; a resource link as a pointer at the server's
//!   `read_resource` tool; an embedded resource's text as is, its blob saved
//!   under `cache/documents` with a line naming the file. Then
//!   `{"result": TEXT}`, or with `structuredContent`:
//!   `{"result": TEXT, "structuredContent": S}` (`{"result": S}` when there
//!   is no text).
//!
//! With `pass_media` (`McpClients::pass_media`), image and audio blocks
//! are not saved: they become the media of a
//! [`ToolContent`] result, whose text is the rest rendered as above.
//!
//! The result is read as plain JSON (the wire form), so a block of a type
//! this version does not know is skipped rather than failing the call.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use base64::Engine;
use hermes_runtime::content::{Media, MediaKind, ToolContent};
use regex::Regex;
use serde_json::{json, Value};

use super::naming;

/// The most bytes one decoded image, audio or resource may have.
pub const MAX_MEDIA_BYTES: usize = 50 * 1024 * 1024;

/// Credentials in error text: tokens, keys, `Bearer ...`, `password=...`,
/// an OAuth token response's or registration's secrets as JSON.
static CREDENTIAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:"(?:access_token|refresh_token|id_token|client_secret)"\s*:\s*"[^"]{0,4096}"|ghp_[A-Za-z0-9_]{1,255}|sk-[A-Za-z0-9_]{1,255}|Bearer\s+\S+|token=[^\s&,;"']{1,255}|key=[^\s&,;"']{1,255}|API_KEY=[^\s&,;"']{1,255}|password=[^\s&,;"']{1,255}|secret=[^\s&,;"']{1,255})"#,
    )
    .ok()
});

/// `text` with every credential-looking part written `[REDACTED]`.
pub fn strip_credentials(text: &str) -> String {
    match &*CREDENTIAL {
        Some(re) => re.replace_all(text, "[REDACTED]").into_owned(),
        None => text.to_string(),
    }
}

/// `{"error": MESSAGE}` with credentials stripped from MESSAGE.
pub fn error(message: &str) -> String {
    hermes_runtime::error_json(strip_credentials(message))
}

/// Renders a `tools/call` result (its JSON form); see the module docs.
/// With `pass_media`, image and audio blocks within
/// [`MAX_PASSED_BYTES`] become media of a
/// [`ToolContent`] result (its text the rendering of the other blocks)
/// instead of files.
pub fn call_result(result: &Value, server: &str, home: &Path, pass_media: bool) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let mut text = String::new();
        for block in blocks {
            if let Some(t) = block.get("text").and_then(Value::as_str) {
                text.push_str(t);
            } else if let Some(t) = block.pointer("/resource/text").and_then(Value::as_str) {
                text.push_str(t);
            }
        }
        if text.is_empty() {
            text = "MCP tool returned an error".into();
        }
        return error(&text);
    }
    let mut media = Vec::new();
    let parts: Vec<String> = blocks
        .iter()
        .filter(|b| !(pass_media && passed(b, &mut media)))
        .map(|b| block(b, server, home))
        .filter(|p| !p.is_empty())
        .collect();
    let text = parts.join("\n");
    let out = match result.get("structuredContent") {
        Some(s) if !s.is_null() && !text.is_empty() => {
            json!({"result": text, "structuredContent": s})
        }
        Some(s) if !s.is_null() => json!({ "result": s }),
        _ => json!({ "result": text }),
    };
    ToolContent {
        text: out.to_string(),
        media,
    }
    .into_result()
}

/// The most bytes an image or audio block passed through may have (a larger
/// one is saved to the cache as without `pass_media`).
pub const MAX_PASSED_BYTES: usize = hermes_runtime::content::MAX_MEDIA_BYTES;

/// Takes an image or audio block of its kind's MIME type and within
/// [`MAX_PASSED_BYTES`] into `media`; `false` for any other block.
fn passed(b: &Value, media: &mut Vec<Media>) -> bool {
    let kind = match str_of(b, "type") {
        "image" => MediaKind::Image,
        "audio" => MediaKind::Audio,
        _ => return false,
    };
    let data = str_of(b, "data").trim();
    let mime = str_of(b, "mimeType");
    let item = Media {
        kind,
        mime_type: mime.to_string(),
        data: data.to_string(),
    };
    let prefix = if kind == MediaKind::Image {
        "image/"
    } else {
        "audio/"
    };
    if data.is_empty() || !mime.starts_with(prefix) || item.byte_len() > MAX_PASSED_BYTES {
        return false;
    }
    media.push(item);
    true
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// One content block as text ("" when it renders to nothing).
fn block(b: &Value, server: &str, home: &Path) -> String {
    let kind = str_of(b, "type");
    match kind {
        "text" => str_of(b, "text").to_string(),
        "image" | "audio" => media(b, kind, home),
        "resource_link" => {
            let uri = str_of(b, "uri");
            if uri.is_empty() {
                return String::new();
            }
            let mut details = format!("uri={uri}");
            for (label, key) in [("name", "name"), ("mimeType", "mimeType")] {
                let v = str_of(b, key);
                if !v.is_empty() {
                    details += &format!(", {label}={v}");
                }
            }
            let reader = naming::tool_name(server, "read_resource");
            format!("[MCP resource link: {details} — fetch it with {reader}]")
        }
        "resource" => match b.get("resource") {
            Some(r) => resource_contents(r, home),
            None => String::new(),
        },
        _ => String::new(),
    }
}

/// One resource's contents (embedded in a result, or read): its text, or
/// its blob saved to the document cache.
pub fn resource_contents(r: &Value, home: &Path) -> String {
    if let Some(text) = r.get("text").and_then(Value::as_str) {
        return text.to_string();
    }
    let Some(blob) = r.get("blob").and_then(Value::as_str) else {
        return String::new();
    };
    let uri = str_of(r, "uri");
    let mime = str_of(r, "mimeType");
    if blob.len() > MAX_MEDIA_BYTES / 3 * 4 + 4 {
        return format!(
            "[MCP embedded resource too large to cache: ~{} bytes, uri={uri}]",
            blob.len() / 4 * 3
        );
    }
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(blob.trim()) else {
        let what = if mime.is_empty() { uri } else { mime };
        return format!("[MCP embedded resource could not be decoded: {what}]");
    };
    let name = file_name(uri);
    match save(
        home,
        "documents",
        &format!("doc_{}_", short_id()),
        &name,
        &bytes,
    ) {
        Ok(path) => {
            let detail = if mime.is_empty() {
                "unknown type"
            } else {
                mime
            };
            format!(
                "[MCP resource saved to {} ({detail}, {} bytes) — read it with read_file or terminal tools]",
                path.display(),
                bytes.len()
            )
        }
        Err(_) => {
            let what = if mime.is_empty() { uri } else { mime };
            format!("[MCP embedded resource could not be cached: {what}]")
        }
    }
}

/// An image or audio block saved to the cache: `MEDIA:<path>`, or "" when
/// it is not what it says (bad base64, an image that is no image).
fn media(b: &Value, kind: &str, home: &Path) -> String {
    let data = str_of(b, "data");
    let mime = str_of(b, "mimeType")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if data.is_empty() || !mime.starts_with(&format!("{kind}/")) {
        return String::new();
    }
    if data.len() > MAX_MEDIA_BYTES / 3 * 4 + 4 {
        return format!(
            "[MCP {kind} resource too large to cache: ~{} bytes]",
            data.len() / 4 * 3
        );
    }
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.trim()) else {
        return String::new();
    };
    let (dir, prefix, ext) = if kind == "image" {
        if !looks_like_image(&bytes) {
            return String::new();
        }
        ("images", "img_", image_extension(&mime))
    } else {
        ("audio", "audio_", audio_extension(&mime))
    };
    match save(home, dir, &format!("{prefix}{}", short_id()), ext, &bytes) {
        Ok(path) => format!("MEDIA:{}", path.display()),
        Err(_) => String::new(),
    }
}

fn looks_like_image(d: &[u8]) -> bool {
    d.len() >= 4
        && (d.starts_with(b"\x89PNG\r\n\x1a\n")
            || d.starts_with(b"\xff\xd8\xff")
            || d.starts_with(b"GIF87a")
            || d.starts_with(b"GIF89a")
            || d.starts_with(b"BM")
            || (d.starts_with(b"RIFF") && d.get(8..12) == Some(b"WEBP")))
}

fn image_extension(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" | "image/jpg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "image/bmp" => ".bmp",
        "image/svg+xml" => ".svg",
        _ => ".png",
    }
}

fn audio_extension(mime: &str) -> &'static str {
    match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => ".wav",
        "audio/mpeg" | "audio/mp3" => ".mp3",
        "audio/mp4" => ".m4a",
        "audio/webm" => ".webm",
        "audio/flac" => ".flac",
        _ => ".ogg",
    }
}

/// The last path segment of `uri`, without control characters, at most 150
/// characters; `resource.bin` when nothing is left.
fn file_name(uri: &str) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or("");
    let last = path.rsplit('/').next().unwrap_or("");
    let clean: String = last.chars().filter(|c| !c.is_control()).take(150).collect();
    let clean = clean.trim().to_string();
    if clean.is_empty() || clean == "." || clean == ".." {
        "resource.bin".into()
    } else {
        clean
    }
}

/// Twelve hex digits, different for every call.
fn short_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = (nanos ^ (u64::from(std::process::id()) << 32))
        .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    format!("{:012x}", mixed & 0xffff_ffff_ffff)
}

/// Writes `bytes` to `<home>/cache/<dir>/<prefix><suffix>` (never over an
/// existing file).
fn save(
    home: &Path,
    dir: &str,
    prefix: &str,
    suffix: &str,
    bytes: &[u8],
) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let dir = home.join("cache").join(dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{prefix}{suffix}"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    file.write_all(bytes)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_stripped() {
        assert_eq!(
            strip_credentials("failed: Bearer abc.def token=xyz&x=1 sk-live_1 ok"),
            "failed: [REDACTED] [REDACTED]&x=1 [REDACTED] ok"
        );
    }

    #[test]
    fn text_structured_and_errors() {
        let home = Path::new("/nonexistent");
        let r = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(call_result(&r, "s", home, false), r#"{"result":"a\nb"}"#);
        let r = json!({"content": [], "structuredContent": {"n": 1}});
        assert_eq!(call_result(&r, "s", home, false), r#"{"result":{"n":1}}"#);
        let r = json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"n": 1}});
        assert_eq!(
            call_result(&r, "s", home, false),
            r#"{"result":"t","structuredContent":{"n":1}}"#
        );
        let r = json!({"isError": true, "content": [{"type": "text", "text": "bad key=123"}]});
        assert_eq!(
            call_result(&r, "s", home, false),
            r#"{"error":"bad [REDACTED]"}"#
        );
        let r = json!({"isError": true, "content": []});
        assert_eq!(
            call_result(&r, "s", home, false),
            r#"{"error":"MCP tool returned an error"}"#
        );
        let r = json!({"content": [{"type": "resource_link", "uri": "file:///x", "name": "x"}]});
        assert_eq!(
            call_result(&r, "my-s", home, false),
            r#"{"result":"[MCP resource link: uri=file:///x, name=x — fetch it with mcp__my_s__read_resource]"}"#
        );
    }

    #[test]
    fn passed_media_are_kept_out_of_the_text() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\n");
        let r = json!({"content": [{"type": "text", "text": "t"},
                                   {"type": "image", "data": png, "mimeType": "image/png"},
                                   {"type": "image", "data": "AAAA", "mimeType": "text/plain"}]});
        let c = ToolContent::from_result(call_result(&r, "s", dir.path(), true));
        assert_eq!(c.media.len(), 1);
        assert_eq!(
            (c.media[0].data.as_str(), c.media[0].mime_type.as_str()),
            (png.as_str(), "image/png")
        );
        // The block whose type is not its kind's is rendered as without
        // pass_media (here: nothing), and nothing was cached.
        assert_eq!(c.text, r#"{"result":"t"}"#);
        assert!(!dir.path().join("cache").exists());
    }

    #[test]
    fn images_are_cached_as_media() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest");
        let r = json!({"content": [{"type": "image", "data": png, "mimeType": "image/png"},
                                   {"type": "image", "data": "bm90IGFuIGltYWdl", "mimeType": "image/png"}]});
        let out: Value = serde_json::from_str(&call_result(&r, "s", dir.path(), false))
            .unwrap_or_else(|e| panic!("{e}"));
        let text = out["result"].as_str().unwrap_or_default();
        let path = text
            .strip_prefix("MEDIA:")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(path.ends_with(".png"));
        assert_eq!(
            std::fs::read(path).unwrap_or_default(),
            b"\x89PNG\r\n\x1a\nrest"
        );
    }
}
