//! A tool result with media: text plus images (and audio), each as base64
//! with its MIME type ([`ToolContent`]).
//!
//! A `#[hermes_tool]` function returns `ToolContent` (or
//! `Result<ToolContent, E>`) like any other result type; a run-time tool's
//! handler returns [`ToolContent::into_result`]. Inside dispatch the result
//! stays one string, a JSON envelope (`{"hermes_content": {...}}`) that
//! only this module writes and reads, so timeouts, middleware and hooks
//! handle it as any result. When the handler has answered,
//! dispatch checks it (`settle`): the text goes through the result cap as
//! any text result does; a media item that does not decode, whose MIME
//! type is not of its kind, or that is over [`MAX_MEDIA_BYTES`] (or past
//! the first [`MAX_MEDIA_ITEMS`]) is dropped, with a line in the text
//! saying why.
//!
//! What the caller gets: [`Registry::dispatch_content`](crate::Registry::dispatch_content)
//! answers the `ToolContent`; `dispatch` and `dispatch_json` answer text,
//! the text with a note naming each media item not shown
//! ([`ToolContent::to_text`]). [`ToolContent::to_message_content`] writes
//! it as a provider takes tool results ([`ResultForm`]): OpenAI's content
//! parts (`image_url` with a `data:` URL), Anthropic's `tool_result`
//! blocks (`image` with a base64 `source`), or text with the note for
//! dialects that take no images.

use base64::Engine;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};

use crate::dialect::Dialect;

/// The most bytes one media item may have, decoded: 5 MiB, the largest
/// image Anthropic's API takes (OpenAI's limit is higher).
pub const MAX_MEDIA_BYTES: usize = 5 * 1024 * 1024;

/// The most media items one result keeps; the rest are dropped with a note.
pub const MAX_MEDIA_ITEMS: usize = 16;

/// The image types both OpenAI and Anthropic take in a tool result; an
/// image of another type is shown to them as a note.
pub const MODEL_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The key of the envelope a content result travels in through dispatch.
const ENVELOPE_KEY: &str = "hermes_content";
/// How the envelope's compact JSON text starts.
const ENVELOPE_HEAD: &str = "{\"hermes_content\":";

/// What kind of media an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    Image,
    Audio,
}

impl MediaKind {
    fn word(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
        }
    }
}

/// One image or audio item of a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    pub kind: MediaKind,
    /// `image/png`, `audio/wav`, ...
    pub mime_type: String,
    /// The bytes, base64 (standard alphabet, padded).
    pub data: String,
}

impl Media {
    /// The decoded size, from the base64 length.
    pub fn byte_len(&self) -> usize {
        let data = self.data.trim_end();
        let pad = data.bytes().rev().take_while(|&b| b == b'=').count();
        (data.len() / 4 * 3).saturating_sub(pad)
    }

    /// `image (image/png, 1234 bytes)`.
    fn describe(&self) -> String {
        format!(
            "{} ({}, {} bytes)",
            self.kind.word(),
            self.mime_type,
            self.byte_len()
        )
    }
}

/// A tool result of text plus media. Returned by a tool, it reaches the
/// model as its provider takes it (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolContent {
    /// The text part: what the model reads (a JSON document or plain text).
    pub text: String,
    /// Images and audio, in order.
    pub media: Vec<Media>,
}

#[derive(Serialize, Deserialize)]
struct Wire<T> {
    #[serde(rename = "hermes_content")]
    content: T,
}

#[derive(Deserialize)]
struct Parts<'a> {
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
    #[serde(default)]
    media: Vec<Media>,
}

/// [`Parts`] borrowed, to write the envelope without copying the media.
#[derive(Serialize)]
struct PartsRef<'a> {
    text: &'a str,
    media: &'a [Media],
}

impl Serialize for ToolContent {
    /// The envelope dispatch recognises: `{"hermes_content": {"text", "media"}}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Wire {
            content: PartsRef {
                text: &self.text,
                media: &self.media,
            },
        }
        .serialize(serializer)
    }
}

impl ToolContent {
    /// A result of `text` alone.
    pub fn text(text: impl Into<String>) -> Self {
        ToolContent {
            text: text.into(),
            media: Vec::new(),
        }
    }

    /// Adds an image of these bytes (`mime_type`: `image/png`, ...).
    pub fn with_image(self, bytes: &[u8], mime_type: impl Into<String>) -> Self {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        self.with_media(MediaKind::Image, data, mime_type)
    }

    /// Adds an item already base64-encoded.
    pub fn with_media(
        mut self,
        kind: MediaKind,
        data: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Self {
        self.media.push(Media {
            kind,
            mime_type: mime_type.into(),
            data: data.into(),
        });
        self
    }

    /// The result string a run-time tool's handler returns for this
    /// content: the envelope; without media, the text as a JSON document
    /// (itself when it is one, else a JSON string), as a tool's text
    /// result is.
    pub fn into_result(self) -> String {
        if self.media.is_empty() {
            return json_text(self.text);
        }
        serde_json::to_string(&self).unwrap_or_else(|e| crate::error_json(e.to_string()))
    }

    /// A dispatch result read back: the envelope's content, or the whole
    /// string as text.
    pub fn from_result(result: String) -> Self {
        if !is_content_result(&result) {
            return ToolContent::text(result);
        }
        match serde_json::from_str::<Wire<Parts<'_>>>(&result) {
            Ok(Wire { content }) => ToolContent {
                text: content.text.into_owned(),
                media: content.media,
            },
            Err(_) => ToolContent::text(result),
        }
    }

    /// The text a caller that takes no media gets: without media, the text
    /// as a JSON document (itself when it is one, else a JSON string); else
    /// `{"result": TEXT, "media_note": "..."}` naming each item not shown.
    pub fn to_text(&self) -> String {
        self.text_with_note(&self.media.iter().collect::<Vec<_>>())
    }

    fn text_with_note(&self, hidden: &[&Media]) -> String {
        if hidden.is_empty() {
            return json_text(self.text.clone());
        }
        let items: Vec<String> = hidden.iter().map(|m| m.describe()).collect();
        json!({
            "result": self.text,
            "media_note": format!(
                "not shown here (this reader takes text only): {}",
                items.join(", ")
            ),
        })
        .to_string()
    }

    /// The content of the tool-result message for a provider (see
    /// [`ResultForm`]): a list of parts for OpenAI and Anthropic, the text
    /// with its note (a string) for the others. Items the form cannot
    /// carry (audio, an image type outside [`MODEL_IMAGE_TYPES`]) are named
    /// in a text part.
    pub fn to_message_content(&self, form: ResultForm) -> Value {
        let (shown, hidden): (Vec<&Media>, Vec<&Media>) =
            self.media.iter().partition(|m| match form {
                ResultForm::Text => false,
                ResultForm::OpenAi | ResultForm::Anthropic => {
                    m.kind == MediaKind::Image && MODEL_IMAGE_TYPES.contains(&m.mime_type.as_str())
                }
            });
        if shown.is_empty() {
            return Value::String(self.text_with_note(&hidden));
        }
        let mut parts = Vec::new();
        if !self.text.is_empty() {
            parts.push(json!({"type": "text", "text": self.text}));
        }
        for m in shown {
            parts.push(match form {
                ResultForm::Anthropic => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": m.mime_type, "data": m.data},
                }),
                _ => json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{};base64,{}", m.mime_type, m.data)},
                }),
            });
        }
        if !hidden.is_empty() {
            let items: Vec<String> = hidden.iter().map(|m| m.describe()).collect();
            parts.push(json!({
                "type": "text",
                "text": format!("[not shown: {}]", items.join(", ")),
            }));
        }
        Value::Array(parts)
    }
}

/// How a provider takes a tool result's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResultForm {
    /// OpenAI chat completions: the `tool` message's `content` as parts,
    /// `{"type": "text"}` and `{"type": "image_url", "image_url": {"url": "data:..."}}`.
    OpenAi,
    /// Anthropic messages: a `tool_result` block's `content`,
    /// `{"type": "text"}` and `{"type": "image", "source": {"type": "base64", ...}}`.
    Anthropic,
    /// Text only: the text and a note naming the media.
    Text,
}

impl ResultForm {
    /// The form of a schema dialect's provider: OpenAI's for `openai` and
    /// `openai-strict`; text for Gemini, llama.cpp and MCP (an MCP server
    /// sends media as its own content blocks).
    pub fn of(dialect: Dialect) -> ResultForm {
        match dialect {
            Dialect::OpenAi | Dialect::OpenAiStrict => ResultForm::OpenAi,
            _ => ResultForm::Text,
        }
    }
}

/// `text` when it is a JSON document, else `text` as a JSON string: the
/// rule a tool's `String` result follows (`output_value`).
fn json_text(text: String) -> String {
    if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() {
        text
    } else {
        Value::String(text).to_string()
    }
}

/// Whether a result string is a content envelope.
#[inline]
pub fn is_content_result(result: &str) -> bool {
    result.starts_with(ENVELOPE_HEAD)
}

/// The answer of `dispatch` / `dispatch_json`: a content result as text
/// with its note ([`ToolContent::to_text`]), anything else unchanged.
#[inline]
pub(crate) fn text_only(result: String) -> String {
    if is_content_result(&result) {
        ToolContent::from_result(result).to_text()
    } else {
        result
    }
}

/// A handler's content result, checked (module docs): the text capped as
/// any text result (`cap`), media that decode, of their kind, within
/// [`MAX_MEDIA_BYTES`] and the first [`MAX_MEDIA_ITEMS`]. A result with no
/// media left is its text alone.
pub(crate) fn settle(result: String, cap: impl FnOnce(String) -> String) -> String {
    let Ok(Wire { content }) = serde_json::from_str::<Wire<Parts<'_>>>(&result) else {
        return crate::error_json(format!(
            "Tool result could not be read: a `{ENVELOPE_KEY}` envelope that is not text and media"
        ));
    };
    let mut notes = Vec::new();
    let mut media = Vec::new();
    for (i, m) in content.media.into_iter().enumerate() {
        if i >= MAX_MEDIA_ITEMS {
            notes.push(format!(
                "[{} dropped: a result keeps at most {MAX_MEDIA_ITEMS} media items]",
                m.describe()
            ));
            continue;
        }
        let mime = m.mime_type.trim().to_ascii_lowercase();
        if !mime.starts_with(&format!("{}/", m.kind.word())) {
            notes.push(format!(
                "[{} dropped: its MIME type is not {}/...]",
                m.describe(),
                m.kind.word()
            ));
            continue;
        }
        if m.byte_len() > MAX_MEDIA_BYTES {
            notes.push(format!(
                "[{} dropped: over the {} MiB cap of one media item]",
                m.describe(),
                MAX_MEDIA_BYTES >> 20
            ));
            continue;
        }
        if base64::engine::general_purpose::STANDARD
            .decode(m.data.trim())
            .is_err()
        {
            notes.push(format!(
                "[{} dropped: its data is not base64]",
                m.describe()
            ));
            continue;
        }
        media.push(Media {
            mime_type: mime,
            data: m.data.trim().to_string(),
            ..m
        });
    }
    let mut text = content.text.into_owned();
    for n in notes {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&n);
    }
    let text = cap(text);
    ToolContent { text, media }.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png() -> ToolContent {
        ToolContent::text("a chart").with_image(b"\x89PNG\r\n\x1a\n", "image/png")
    }

    #[test]
    fn the_envelope_round_trips() {
        let c = png();
        let s = c.clone().into_result();
        assert!(is_content_result(&s), "{s}");
        assert_eq!(ToolContent::from_result(s), c);
        assert_eq!(ToolContent::text("x").into_result(), "\"x\"");
        assert_eq!(ToolContent::text("{}").into_result(), "{}");
        assert_eq!(
            ToolContent::from_result("{}".into()),
            ToolContent::text("{}")
        );
    }

    #[test]
    fn sizes_from_base64() {
        for n in 0..10 {
            let c = ToolContent::default().with_image(&vec![0u8; n], "image/png");
            assert_eq!(c.media[0].byte_len(), n);
        }
    }

    #[test]
    fn text_names_what_it_does_not_show() {
        let text = png().to_text();
        let v: Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(v["result"], "a chart");
        assert!(
            v["media_note"]
                .as_str()
                .is_some_and(|n| n.contains("image (image/png, 8 bytes)")),
            "{text}"
        );
    }

    #[test]
    fn forms() {
        let c = png().with_media(MediaKind::Audio, "AAAA", "audio/wav");
        let openai = c.to_message_content(ResultForm::OpenAi);
        assert_eq!(
            openai[1]["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgo="
        );
        assert!(openai[2]["text"]
            .as_str()
            .is_some_and(|t| t.contains("audio")));
        let anthropic = c.to_message_content(ResultForm::Anthropic);
        assert_eq!(anthropic[1]["source"]["media_type"], "image/png");
        assert!(c.to_message_content(ResultForm::Text).is_string());
    }
}
