//! The `web` toolset: `web_extract` fetches pages and returns their text,
//! `web_search` asks a configured search endpoint. Fetching and its address
//! guard are in `fetch.rs` and `policy.rs`, HTML to text in the `hermes-html` crate.
//!
//! Profile settings (the profile's `.env`, read at call time):
//! `WEB_SEARCH_API_KEY` (web_search is available only with it),
//! `WEB_SEARCH_ENDPOINT` (default [`DEFAULT_SEARCH_ENDPOINT`]),
//! `WEB_EXTRACT_TIMEOUT` (seconds one page may take, default
//! [`FETCH_TIMEOUT`]) and `HERMES_ALLOW_PRIVATE_URLS` (see `policy.rs`).
//!
//! One page's work is bounded whatever the page: at most [`MAX_PAGE_BYTES`]
//! are read, its text is at most [`html::MAX_TEXT_BYTES`], lists nest at most
//! [`html::MAX_DEPTH`] levels deep, and one deadline covers the fetch and the
//! conversion (the writer looks at it itself: the runtime cannot stop a
//! blocking tool's thread).

mod fetch;
use hermes_html as html;
mod policy;
#[cfg(test)]
mod tool_tests;

use std::time::{Duration, Instant};

use hermes_macros::hermes_tool;
use hermes_runtime::{Profile, ToolContext};
use serde::Serialize;
use serde_json::{json, Value};

pub use policy::ALLOW_PRIVATE_SETTING;

/// URLs read by one `web_extract` call at most.
pub const MAX_URLS: usize = 5;
/// Characters of one page returned when no `char_limit` is given.
pub const DEFAULT_CHAR_LIMIT: usize = 15_000;
const MIN_CHAR_LIMIT: usize = 2_000;
const MAX_CHAR_LIMIT: usize = 500_000;
/// Bytes of one page read at most.
pub const MAX_PAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Time one page may take by default: the fetch, redirects included, and
/// the conversion.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
/// The profile setting changing [`FETCH_TIMEOUT`]: whole seconds, from 1 to
/// [`MAX_FETCH_TIMEOUT`].
pub const TIMEOUT_SETTING: &str = "WEB_EXTRACT_TIMEOUT";
/// The longest time a profile may give one page.
pub const MAX_FETCH_TIMEOUT: Duration = Duration::from_secs(300);
const MAX_REDIRECTS: u32 = 5;
/// The secret web_search needs.
pub const SEARCH_KEY_SETTING: &str = "WEB_SEARCH_API_KEY";
/// The setting naming the search endpoint.
pub const SEARCH_ENDPOINT_SETTING: &str = "WEB_SEARCH_ENDPOINT";
/// Where web_search goes without a `WEB_SEARCH_ENDPOINT` (Brave Search's
/// web API; any endpoint answering the same request shape works).
pub const DEFAULT_SEARCH_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);
/// Query parameters that carry credentials: URLs holding them are refused.
const SENSITIVE_QUERY_NAMES: &[&str] = &[
    "access_token",
    "api_key",
    "apikey",
    "auth_token",
    "authorization",
    "client_secret",
    "credential",
    "credentials",
    "jwt",
    "password",
    "passwd",
    "secret",
    "session_id",
    "signature",
    "token",
    "x-amz-security-token",
    "x-amz-signature",
];

/// One page's answer.
#[derive(Debug, Serialize)]
pub struct PageResult {
    pub url: String,
    pub title: String,
    pub content: String,
    pub error: Option<String>,
}

/// Fetch web pages and return their content as readable text (markdown for
/// HTML; text, JSON and XML as they are).
///
/// Up to 5 URLs per call. A page within `char_limit` characters (default
/// 15000) comes back whole; a longer one comes back as its beginning and end
/// with the cut marked, and the full text is saved to a file whose path is
/// given. Pages larger than 5 MB are cut; each page has 20 seconds.
/// Private and loopback addresses are refused unless the profile allows
/// them; link-local and cloud metadata addresses always are.
#[hermes_tool(
    toolset = "web",
    emoji = "📄",
    max_result_chars = 100000,
    read_only,
    open_world,
    concurrency = "safe"
)]
pub fn web_extract(
    ctx: &ToolContext,
    /// The http(s) URLs to read, at most 5.
    #[schemars(length(max = MAX_URLS))]
    urls: Vec<String>,
    /// Characters returned per page at most (default 15000, at least 2000).
    #[schemars(range(min = 2000))]
    char_limit: Option<u64>,
) -> Result<Value, String> {
    let urls: Vec<String> = urls
        .into_iter()
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty())
        .take(MAX_URLS)
        .collect();
    if urls.is_empty() {
        return Err("urls is empty: give at least one http(s) URL".into());
    }
    let limit = char_limit
        .map_or(DEFAULT_CHAR_LIMIT, |l| {
            usize::try_from(l).unwrap_or(MAX_CHAR_LIMIT)
        })
        .clamp(MIN_CHAR_LIMIT, MAX_CHAR_LIMIT);
    let access = policy::Access::for_profile(ctx.profile());
    let access = &access;
    let profile = ctx.profile();
    let timeout = page_timeout(profile)?;
    let results: Vec<PageResult> = std::thread::scope(|s| {
        let handles: Vec<_> = urls
            .iter()
            .map(|url| s.spawn(move || extract_one(profile, url, access, limit, timeout)))
            .collect();
        handles
            .into_iter()
            .zip(&urls)
            .map(|(h, url)| {
                h.join().unwrap_or_else(|_| PageResult {
                    url: url.clone(),
                    title: String::new(),
                    content: String::new(),
                    error: Some("extraction failed unexpectedly".into()),
                })
            })
            .collect()
    });
    Ok(json!({ "results": results }))
}

/// The time one page may take: [`TIMEOUT_SETTING`] of the profile, else
/// [`FETCH_TIMEOUT`].
fn page_timeout(profile: &Profile) -> Result<Duration, String> {
    let Some(raw) = profile.secret(TIMEOUT_SETTING) else {
        return Ok(FETCH_TIMEOUT);
    };
    raw.trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
        .filter(|t| (Duration::from_secs(1)..=MAX_FETCH_TIMEOUT).contains(t))
        .ok_or_else(|| {
            format!(
                "The profile's {TIMEOUT_SETTING} is '{raw}': give whole seconds from 1 to {}",
                MAX_FETCH_TIMEOUT.as_secs()
            )
        })
}

/// One page within `timeout`: the fetch and the conversion share one
/// deadline.
fn extract_one(
    profile: &Profile,
    url: &str,
    access: &policy::Access,
    limit: usize,
    timeout: Duration,
) -> PageResult {
    let deadline = Instant::now() + timeout;
    let failed = |e: String| PageResult {
        url: url.to_string(),
        title: String::new(),
        content: String::new(),
        error: Some(e),
    };
    if let Some(name) = sensitive_query(url) {
        return failed(format!(
            "Blocked: the URL carries a credential-like query parameter ({name}); remove it"
        ));
    }
    let limits = fetch::Limits {
        timeout,
        max_bytes: MAX_PAGE_BYTES,
        max_redirects: MAX_REDIRECTS,
    };
    let page = match fetch::get_page(url, access.clone(), limits) {
        Ok(page) => page,
        Err(e) => return failed(e.to_string()),
    };
    let final_url = page.final_url.clone();
    let cut = page.cut;
    let (title, text) = match readable(page, deadline, timeout) {
        Ok(found) => found,
        Err(e) => return failed(e),
    };
    let mut content = text;
    if cut {
        content.push_str(&format!(
            "\n\n[The page is larger than {} MB; only its beginning was read.]",
            MAX_PAGE_BYTES / (1024 * 1024)
        ));
    }
    PageResult {
        content: fit(profile, &final_url, content, limit),
        url: final_url,
        title,
        error: None,
    }
}

/// The page's title and text, by content type; an HTML page is converted
/// by `deadline` (`timeout` after the start).
fn readable(
    page: fetch::Page,
    deadline: Instant,
    timeout: Duration,
) -> Result<(String, String), String> {
    let mime = page.content_type.split(';').next().unwrap_or("").trim();
    let binary = page.body.contains(&0);
    let text = decode(page.body, &page.content_type);
    let looks_html = || {
        let head: String = text
            .chars()
            .take(1024)
            .collect::<String>()
            .to_ascii_lowercase();
        head.contains("<html") || head.contains("<!doctype html")
    };
    let is_html =
        matches!(mime, "text/html" | "application/xhtml+xml") || (mime.is_empty() && looks_html());
    if is_html {
        let limits = html::Limits {
            max_output: html::MAX_TEXT_BYTES,
            deadline: Some(deadline),
        };
        let converted = html::convert(&text, &page.final_url, limits);
        if converted.stopped == Some(html::Stop::Deadline) && converted.text.is_empty() {
            return Err(format!(
                "Timed out after {} s: no text of the page was converted in time",
                timeout.as_secs()
            ));
        }
        return Ok(converted.into_parts());
    }
    let textual = mime.is_empty()
        || mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime,
            "application/json" | "application/xml" | "application/javascript"
        );
    if textual && !binary {
        return Ok((String::new(), text.trim().to_string()));
    }
    Err(format!(
        "Unsupported content type '{mime}': only HTML and text pages are read"
    ))
}

/// The body as text, in the charset the Content-Type names, read as
/// browsers read it (`iso-8859-1` and `us-ascii` name windows-1252, a BOM
/// overrides the label), else UTF-8. Invalid bytes are replaced; valid UTF-8
/// keeps the body's buffer.
fn decode(body: Vec<u8>, content_type: &str) -> String {
    match charset(content_type) {
        Some(encoding) if encoding != encoding_rs::UTF_8 => encoding.decode(&body).0.into_owned(),
        _ => String::from_utf8(body)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// The encoding of a Content-Type's `charset` parameter, if it names one.
fn charset(content_type: &str) -> Option<&'static encoding_rs::Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        encoding_rs::Encoding::for_label(value.trim().trim_matches('"').as_bytes())
    })
}

/// The text within `limit` characters: whole, or about 3/4 head and 1/4
/// tail cut at line ends, with a note saying what was left out and where the
/// full text was saved (under the profile's home).
fn fit(profile: &Profile, url: &str, text: String, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text;
    }
    let head_budget = limit * 3 / 4;
    let tail_budget = limit - head_budget;
    let mut head: String = text.chars().take(head_budget).collect();
    if let Some(nl) = head.rfind('\n').filter(|&nl| nl > head.len() / 2) {
        head.truncate(nl);
    }
    let mut tail: String = text.chars().skip(total - tail_budget).collect();
    if let Some(nl) = tail.find('\n').filter(|&nl| nl < tail.len() / 2) {
        tail = tail[nl + 1..].to_string();
    }
    let saved = save_full_text(profile, url, &text);
    let mut note = format!(
        "\n\n[... middle omitted: showing {} characters from the start and {} from the end of {total} ...]",
        head.chars().count(),
        tail.chars().count()
    );
    if let Some(path) = saved {
        note.push_str(&format!(
            "\n[Full text saved to {path}; the omitted part starts at line {}.]",
            head.lines().count() + 1
        ));
    }
    format!("{head}{note}\n\n{tail}")
}

/// Saves the full text under `cache/web/` in the profile's home; its path.
fn save_full_text(profile: &Profile, url: &str, text: &str) -> Option<String> {
    let dir = profile.home().join("cache").join("web");
    std::fs::create_dir_all(&dir).ok()?;
    // FNV-1a: a stable file name per URL.
    let hash = url.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let path = dir.join(format!("{hash:016x}.md"));
    std::fs::write(&path, text).ok()?;
    Some(path.to_string_lossy().into_owned())
}

/// The first query parameter of `url` named like a credential (names
/// percent-decoded, as the server will read them).
fn sensitive_query(url: &str) -> Option<String> {
    let query = url.split_once('?')?.1.split('#').next().unwrap_or("");
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, value)| {
            !value.is_empty() && SENSITIVE_QUERY_NAMES.contains(&name.to_ascii_lowercase().as_str())
        })
        .map(|(name, _)| name.into_owned())
}

/// The availability check of `web_search`: the profile has a search key.
pub fn has_search_key(profile: &Profile) -> bool {
    profile.secret(SEARCH_KEY_SETTING).is_some()
}

/// Search the web: titles, URLs and descriptions of the best results (5 by
/// default).
///
/// The query goes to the profile's search service as written, so operators
/// it supports (site:example.com, "exact phrase", -term) may be used.
#[hermes_tool(
    toolset = "web",
    emoji = "🔍",
    check = has_search_key,
    requires_env = ["WEB_SEARCH_API_KEY"],
    max_result_chars = 100000,
    read_only,
    open_world,
    concurrency = "safe"
)]
pub fn web_search(
    ctx: &ToolContext,
    /// What to search for.
    query: String,
    /// How many results to return (default 5, at most 20).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u64>,
) -> Result<Value, String> {
    let query = query.trim();
    if query.is_empty() {
        return Err("query is empty: say what to search for".into());
    }
    let Some(key) = ctx.profile().secret(SEARCH_KEY_SETTING) else {
        return Err(format!(
            "web search is not configured: the profile has no {SEARCH_KEY_SETTING}"
        ));
    };
    let endpoint = ctx
        .profile()
        .secret(SEARCH_ENDPOINT_SETTING)
        .unwrap_or_else(|| DEFAULT_SEARCH_ENDPOINT.to_string());
    let limit = limit.unwrap_or(5).clamp(1, 20);
    let answer =
        fetch::search(&endpoint, &key, query, limit, SEARCH_TIMEOUT).map_err(|e| e.to_string())?;
    let web: Vec<Value> = results(&answer)
        .iter()
        .take(usize::try_from(limit).unwrap_or(20))
        .enumerate()
        .map(|(i, r)| {
            let field = |names: &[&str]| {
                names
                    .iter()
                    .find_map(|n| r.get(*n).and_then(Value::as_str))
                    .unwrap_or("")
                    .to_string()
            };
            json!({
                "title": field(&["title", "name"]),
                "url": field(&["url", "link", "href"]),
                "description": html::decode_entities(&strip_tags(&field(&["description", "snippet", "content", "body"]))),
                "position": i + 1,
            })
        })
        .collect();
    Ok(json!({"success": true, "data": {"web": web}}))
}

/// The result list of the common answer shapes: `web.results` (Brave),
/// `results` (SearXNG, Tavily, …), `data.web` (this tool's own shape) or
/// `organic_results`.
fn results(answer: &Value) -> Vec<Value> {
    [
        answer.pointer("/web/results"),
        answer.get("results"),
        answer.pointer("/data/web"),
        answer.get("organic_results"),
    ]
    .into_iter()
    .flatten()
    .find_map(Value::as_array)
    .cloned()
    .unwrap_or_default()
}

/// Search snippets often carry `<strong>` highlights: drop the tags.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}
