//! The page-to-markdown writer of `web_extract`
//! (`hermes_html::to_markdown`) on arbitrary HTML.
//!
//! The first byte picks the page's URL (links are resolved against it); the
//! rest, read as UTF-8 with replacement characters, is the page. Checked: no
//! panic, no hang (`-timeout`), bounded memory (`-rss_limit_mb`), and an
//! output that stays within a generous multiple of the input, so that a
//! writer whose output grows faster than its input (indentation per nesting
//! level, say) is caught.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Pages' URLs: ordinary ones, odd ones and one that is no URL at all.
const BASE_URLS: &[&str] = &[
    "https://example.com/dir/page.html?q=1#top",
    "http://127.0.0.1:8080/",
    "https://user:pw@example.org:443/a/b/c/",
    "http://[::1]/x",
    "file:///tmp/page.html",
    "",
    "not a url",
];

/// Output characters allowed per input byte, on top of [`OUTPUT_SLACK`].
/// Generous on purpose: a link `<a href=x>` (11 bytes) prints the whole
/// page URL, and a list item (`<li>`, 4 bytes) is indented by its nesting
/// depth, which the writer caps.
const OUTPUT_PER_INPUT_BYTE: usize = 64;
/// Output characters allowed whatever the input.
const OUTPUT_SLACK: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let base = BASE_URLS[usize::from(pick) % BASE_URLS.len()];
    let html = String::from_utf8_lossy(rest);
    let (title, markdown) = hermes_html::to_markdown(&html, base);
    let limit = OUTPUT_PER_INPUT_BYTE * html.len() + OUTPUT_SLACK;
    assert!(
        title.len() + markdown.len() <= limit,
        "{} bytes of HTML gave {} bytes of title and markdown (limit {limit})",
        html.len(),
        title.len() + markdown.len()
    );
});
